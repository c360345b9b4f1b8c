# One job per (experiment, task, method, seed chunk): the chunk's seeds run in lockstep.
# An experiment with pack_methods runs a (task, seed chunk)'s methods in one job instead (run_pack).


rule run_bo:
    message:
        job_message("{wildcards.method} on {wildcards.task} ({wildcards.experiment}), seeds {wildcards.chunk}; log: {log}")
    input:
        data=job_data,
    output:
        str(RUNS / "{experiment}" / "{task}" / "{method}" / "seeds{chunk}.json"),
    params:
        job=job_params,
        code=job_code,
    log:
        str(LOGS / "runs" / "{experiment}" / "{task}" / "{method}" / "seeds{chunk}.log"),
    threads: job_threads
    priority: job_priority
    resources:
        gpu=job_gpu,
    conda:
        run_env
    script:
        "../scripts/run_bo.py"


rule run_pack:
    message:
        job_message("every method of {wildcards.experiment}'s pack on {wildcards.task}, seeds {wildcards.chunk}; log: {log}")
    input:
        data=pack_data,
    output:
        str(RUNS / "{experiment}" / "{task}" / "pack-seeds{chunk}.json"),
    params:
        jobs=pack_params,
        code=pack_code,
    log:
        str(LOGS / "runs" / "{experiment}" / "{task}" / "pack-seeds{chunk}.log"),
    threads: pack_threads
    priority: pack_priority
    resources:
        gpu=pack_gpu,
    conda:
        pack_env
    script:
        "../scripts/run_pack.py"


# One experiment's jobs on one task: a part smaller than an experiment (config/reference.yaml).
rule experiment_task:
    message:
        job_message("part {wildcards.experiment} on {wildcards.task}: every job of it is done")
    input:
        experiment_task_manifests,
    output:
        str(RUNS / "{experiment}" / "{task}.json"),
    log:
        str(LOGS / "runs" / "{experiment}" / "{task}.log"),
    wildcard_constraints:
        experiment="[A-Za-z0-9_.-]+",
        task="[A-Za-z0-9_.-]+",
    localrule: True
    run:
        write_part(wildcards.experiment, input, output[0], log[0])


# One experiment's jobs, run alone: a study built in parts (config/reference.yaml) runs
#   snakemake --cores all --configfile CONFIG RESULTS/runs/EXPERIMENT.json
# per part; the report then aggregates every part's records at once.
rule experiment:
    message:
        job_message("part {wildcards.experiment}: every job of it is done")
    input:
        experiment_manifests,
    output:
        str(RUNS / "{experiment}.json"),
    log:
        str(LOGS / "runs" / "{experiment}.log"),
    wildcard_constraints:
        experiment="[A-Za-z0-9_.-]+",
    localrule: True
    run:
        write_part(wildcards.experiment, input, output[0], log[0])
