# Figures + summary tables + protocol + provenance -> one self-contained HTML report.


rule report:
    input:
        figures=rules.figures.output,
        tables=rules.aggregate.output,
        sources=[
            str(provenance.SOURCE_ROOT / "report" / "__init__.py"),
            str(provenance.SOURCE_ROOT / "report" / "templates" / "index.html.j2"),
            str(provenance.SOURCE_ROOT / "protocol.py"),
            str(provenance.SOURCE_ROOT / "claims.py"),
        ],
    output:
        config["report"],
    params:
        config=config,
    log:
        str(LOGS / "report.log"),
    conda:
        "../../envs/report.yaml"
    script:
        "../scripts/report.py"
