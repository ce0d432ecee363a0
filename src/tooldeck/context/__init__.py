"""The context_builder pipeline: query (:mod:`.query`) → retrieval
(:mod:`.retrieve`) → reference-graph rank (:mod:`.rank`) → budget fitter
(:mod:`.fit`), driven by :mod:`.builder`. The selection it fills lives in
:mod:`tooldeck.selection`; persistent state in :mod:`tooldeck.state`.
"""
