# Summary tables -> the report's figures (SVG), each a declared output, and their manifest.


rule figures:
    message:
        job_message("the figures; log: {log}")
    input:
        tables=SUMMARY_FILES,
        sources=script_sources("figures.py"),
    output:
        figures=FIGURE_FILES,
        manifest=str(FIGURES / "figures.json"),
    params:
        config=config,
        config_hash=provenance.config_hash(config),
    log:
        str(LOGS / "figures.log"),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figures.py"
