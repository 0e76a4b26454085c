"""``selfreflect report``: the paper's tables and figures, and the judge-scored studies.

The studies (``controlled-scores``, ``mc-scores``, ``convergence-scores``) read their scores off
the experiment's judgements (``selfreflect judge``), and ``alt-metrics`` and
``agreement-scores`` (the judge on every backend of ``report.agreement_backends``) load the
judge: one module per study, so editing one never reruns another's judge jobs. The run-wide
tables (``main-table``, ``validation``, ``mc-study``, ``convergence``, ``cost-table``,
``human-agreement``, ``backend-agreement``) are the catalog's (:mod:`selfreflect.report.catalog`),
their commands made from it (:mod:`selfreflect.cli.report.tables`); ``performance`` reads the
run's benchmark files after it. A table command only reads the artifact FILES it is given (each
row says its experiment: dataset, subject, judge, strategy) and writes ``<name>.csv/.md/.tex``
into ``--out-dir``, figures ``<name>.png/.pdf`` into ``--figure-dir`` and headline DVC metrics;
a file of those names in those folders that this package did not write is never overwritten
(the command stops with one line, before writing anything).
"""
