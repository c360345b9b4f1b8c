# oscbo: the replication pipeline of "Online Sharp-Calibrated Bayesian Optimization".
# config -> BO runs -> tidy summaries -> figures -> report/index.html
from snakemake.utils import min_version

min_version("9.0")


# config/config.yaml is the full study; `--configfile config/quick.yaml` replaces it
# (it is not merged into it: a quick study must not inherit the full study's experiments).
if not config:

    configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/report.smk"


# Cheap steps that read every run's output: on a cluster (profiles/slurm) they run where
# snakemake runs instead of waiting in the queue.
localrules:
    all,
    prepare_table,
    findings,
    figures,
    report,


if not config["summaries"]:

    localrules:
        aggregate,
        protocol,


rule all:
    default_target: True
    input:
        config["report"],
    message:
        job_message(f"the study, complete: {config['report']}")


onsuccess:
    print(closing_lines())
