# Summary tables, protocol, findings and figures -> one HTML report, and the figures' numbers (CSV)
# in a folder beside it.


rule report:
    message:
        job_message("the report: {output.html}; log: {log}")
    input:
        figures=rules.figures.output.manifest,
        tables=SUMMARY_FILES,
        optional=OPTIONAL_FILES,
        protocol=PROTOCOL_FILE,
        findings=rules.findings.output,
        sources=script_sources("report.py"),
    output:
        html=config["report"],
        numbers=directory(str(numbers_dir(Path(config["report"])))),
    params:
        config=config,
        config_hash=provenance.config_hash(config),
    log:
        str(LOGS / "report.log"),
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/report.py"
