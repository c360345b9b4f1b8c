# One job per (experiment, task, method, seed chunk): the chunk's seeds run in lockstep.


rule run_bo:
    input:
        sources=job_sources,
        data=job_data,
    output:
        str(RUNS / "{experiment}" / "{task}" / "{method}" / "seeds{chunk}.json"),
    params:
        job=job_params,
    log:
        str(LOGS / "runs" / "{experiment}" / "{task}" / "{method}" / "seeds{chunk}.log"),
    threads: config["threads_per_job"]
    resources:
        gpu=GPU_PER_JOB,
    conda:
        run_env
    script:
        "../scripts/run_bo.py"
