"""The sensitivity study's own tools, beside the experiment that ``nsrl reproduce`` runs.

* ``python -m study.sensitivity DIR`` rewrites the tables from a folder's two stored files
  (e.g. the committed ``docs/sensitivity``), and with ``--add NAME RESULTS`` first joins a
  reading computed alone in its own resumable folder
  (:func:`study.sensitivity.readings.add_reading`, the others untouched);
* :func:`study.sensitivity.blocks.blocks` gives the Markdown that ``python -m study.numbers``
  puts in docs/fidelity.md.
"""
