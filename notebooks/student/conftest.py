# notebooks/student/ holds generated files (scripts/student_notebooks.py): nbval does not run
# them (they are the references minus their solutions; tests/test_editions.py checks them).
collect_ignore_glob = ["*.ipynb", "*.md"]
