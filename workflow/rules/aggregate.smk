# Every finished run -> tidy summary tables (steps, curves, final, ranks, paired tests).


# Not when the report is made from published tables (config `summaries`): they are its input.
if not config["summaries"]:

    rule aggregate:
        input:
            manifests=all_job_manifests,
            sources=package_sources(
                "analysis/tables.py", "analysis/summaries.py", "analysis/ranks.py", "analysis/statistics.py",
                "analysis/readings.py", "analysis/dual.py", "records.py", "settings.py"
            ),
        output:
            SUMMARY_FILES,
        params:
            readings=config["readings"],
            left_out=study_config.not_run(config),
        log:
            str(LOGS / "aggregate.log"),
        conda:
            "../../envs/analysis.yaml"
        script:
            "../scripts/aggregate.py"


# Summary tables -> the claims' verdicts under each reading and the paragraphs the report opens with.


rule findings:
    input:
        tables=SUMMARY_FILES,
        sources=package_sources("analysis/claims.py", "analysis/dual.py", "analysis/findings.py"),
    output:
        expand(str(SUMMARY / "{table}.parquet"), table=FINDINGS_TABLES),
    log:
        str(LOGS / "findings.log"),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/findings.py"
