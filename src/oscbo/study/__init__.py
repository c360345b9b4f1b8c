"""The study: its configuration (``config/*.yaml``), its jobs and its protocol.

* :mod:`oscbo.study.config`: read and validate a configuration (schema: ``config.schema.yaml``).
* :mod:`oscbo.study.jobs`: the :class:`~oscbo.study.jobs.Job` grid the workflow runs.
* :mod:`oscbo.study.protocol`: every setting beside the paper's, and every departure.
"""
