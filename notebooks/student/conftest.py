# notebooks/student/ holds generated files (scripts/jupyter_notebooks.py): nbval does not run
# them (they are the references without their solutions; tests/test_jupyter_notebooks.py
# checks them, and `make launch-check` runs them in JupyterLab).
collect_ignore_glob = ["*.ipynb", "*.md"]
