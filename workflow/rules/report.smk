# Summary tables, findings, figures and protocol -> one self-contained HTML report.


rule report:
    input:
        figures=rules.figures.output.manifest,
        tables=SUMMARY_FILES,
        findings=rules.findings.output,
        sources=package_sources("report", "study/protocol.py", "registry.py", "methods/__init__.py",
                                "tasks/__init__.py"),
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
