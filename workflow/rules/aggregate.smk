# Every finished run -> tidy summary tables (steps, curves, final, ranks, paired tests).


rule aggregate:
    input:
        manifests=all_job_manifests,
        sources=[
            str(provenance.SOURCE_ROOT / "aggregate.py"),
            str(provenance.SOURCE_ROOT / "records.py"),
            str(provenance.SOURCE_ROOT / "config.py"),  # the MLL-equivalent lambda of the dual table
            str(provenance.SOURCE_ROOT / "readings.py"),
            str(provenance.SOURCE_ROOT / "statistics.py"),
        ],
    output:
        expand(str(SUMMARY / "{table}.parquet"), table=SUMMARY_TABLES),
    params:
        readings=config["readings"],
    log:
        str(LOGS / "aggregate.log"),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/aggregate.py"


# Summary tables -> the claims' verdicts under each reading and the paragraphs the report opens with.


rule findings:
    input:
        tables=rules.aggregate.output,
        sources=FINDINGS_SOURCES,
    output:
        expand(str(SUMMARY / "{table}.parquet"), table=FINDINGS_TABLES),
    log:
        str(LOGS / "findings.log"),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/findings.py"
