# Every finished run -> tidy summary tables (steps, curves, final, ranks, paired tests).


rule aggregate:
    input:
        manifests=all_job_manifests,
        sources=package_sources(
            "analysis/tables.py", "analysis/summaries.py", "analysis/ranks.py", "analysis/statistics.py",
            "analysis/readings.py", "analysis/dual.py", "records.py", "settings.py"
        ),
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
        sources=package_sources("analysis/claims.py", "analysis/dual.py", "analysis/findings.py"),
    output:
        expand(str(SUMMARY / "{table}.parquet"), table=FINDINGS_TABLES),
    log:
        str(LOGS / "findings.log"),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/findings.py"
