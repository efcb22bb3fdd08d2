"""tools/ as a package of the checkout, the one package root of this project's Python: modules
import each other by full name (`from tools.digest import sha256_of`), and the programs here run
as modules from the checkout (`python3 -m sandbox ...`). A regular package, so that a
`tools` installed in site-packages cannot stand in for this folder.
"""
