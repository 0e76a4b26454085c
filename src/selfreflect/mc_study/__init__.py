"""The multiple-choice study: does SelfReflect rank summaries of a known quality right?

A multiple-choice question's options make the subject's answer distribution exact
(:mod:`.choices`, read while the answers are sampled); stated at several temperatures it gives
summaries whose true distance to the answers is known (:mod:`.variants`), which the judge pass
scores with the experiment's other summaries (:mod:`selfreflect.scoring.experiment`).
:mod:`.scores` reads them off the judgements with their true W1, :mod:`.table` and
:mod:`.figure` report the within-question rank correlation, and :mod:`.power` simulates the
study's power without a model.
"""
