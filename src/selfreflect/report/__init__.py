"""The report: judge-scored studies (controlled pairs, multiple choice, convergence) and the
paper's tables and figures, built from the workflow's artifacts."""
