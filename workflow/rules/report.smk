# Summary tables, protocol, findings and figures -> one self-contained HTML report.


rule report:
    input:
        figures=rules.figures.output.manifest,
        tables=SUMMARY_FILES,
        protocol=PROTOCOL_FILE,
        findings=rules.findings.output,
        sources=script_sources("report.py"),
    output:
        config["report"],
    params:
        config=config,
        config_hash=provenance.config_hash(config),
    log:
        str(LOGS / "report.log"),
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/report.py"
