# Every finished run -> tidy summary tables (steps, curves, final, ranks, paired tests); the
# study's protocol -> its table; the tables -> the findings.


# Not when the report is made from published tables (config `summaries`): they are its input.
if not config["summaries"]:

    rule aggregate:
        message:
            job_message("the records into summary tables; log: {log}")
        input:
            manifests=all_job_manifests,
            sources=script_sources("aggregate.py"),
        output:
            SUMMARY_FILES,
        params:
            readings=config["readings"],
            left_out=study_config.not_run(config),
            asked=asked_runs(),
        log:
            str(LOGS / "aggregate.log"),
        conda:
            "../../envs/analysis.yaml"
        script:
            "../scripts/aggregate.py"

    rule protocol:
        message:
            job_message("the protocol table; log: {log}")
        input:
            sources=script_sources("protocol.py"),
        output:
            PROTOCOL_FILE,
        params:
            rows=protocol_rows(),
        log:
            str(LOGS / "protocol.log"),
        conda:
            "../../envs/analysis.yaml"
        script:
            "../scripts/protocol.py"


# Summary tables -> the claims' verdicts under each reading and the paragraphs the report opens with.


rule findings:
    message:
        job_message("the claims and their verdicts; log: {log}")
    input:
        tables=SUMMARY_FILES,
        sources=script_sources("findings.py"),
    output:
        expand(str(SUMMARY / "{table}.parquet"), table=FINDINGS_TABLES),
    log:
        str(LOGS / "findings.log"),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/findings.py"
