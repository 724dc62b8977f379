# notebooks/reader/ holds generated files (scripts/jupyter_notebooks.py): the notebooks the
# site's Binder and Colab buttons open. nbval runs the references they are made from
# (notebooks/*.ipynb); `make launch-check` runs these in JupyterLab.
collect_ignore_glob = ["*.ipynb", "*.md"]
