# Summary tables -> PNG figures, listed with what produced them in figures.json.


rule figures:
    input:
        tables=rules.aggregate.output,
        sources=[str(provenance.SOURCE_ROOT / "figures.py")],
    output:
        str(FIGURES / "figures.json"),
    params:
        config=config,
    log:
        str(LOGS / "figures.log"),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/figures.py"
