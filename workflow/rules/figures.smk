# Summary tables -> the report's figures (SVG), each a declared output, and their manifest.

#: Figures drawn at once, a process each (Snakemake gives it at most --cores): a study's 20-40
#: figures gain little beyond.
FIGURE_PROCESSES = 8

rule figures:
    message:
        job_message("the figures; log: {log}")
    input:
        tables=SUMMARY_FILES,
        # the λ₀ study's claims figure reads the findings' claims
        findings=rules.findings.output if lambda0_study(config) else [],
        sources=script_sources("figures.py"),
    output:
        figures=FIGURE_FILES,
        manifest=str(FIGURES / "figures.json"),
    params:
        config=config,
        config_hash=provenance.config_hash(config),
    log:
        str(LOGS / "figures.log"),
    threads: FIGURE_PROCESSES
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figures.py"
