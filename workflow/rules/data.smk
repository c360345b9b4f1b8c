# Raw tables -> oracle tables (checksums verified; repeated designs averaged; sign applied).


rule prepare_table:
    message:
        job_message("the table of {wildcards.task}; log: {log}")
    input:
        table=raw_table,
        checksums=str(RAW / "SHA256SUMS"),
        sources=script_sources("prepare_table.py"),
    output:
        str(PREPARED / "{task}.parquet"),
    params:
        sign=table_sign,
    log:
        str(LOGS / "data" / "{task}.log"),
    wildcard_constraints:
        task="|".join(tables.TABLES),
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/prepare_table.py"
