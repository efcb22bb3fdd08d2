"""build/ as a package of the checkout (build.ci_build_cli): a regular package, so that PyPA's
`build`, where a Python has it installed, cannot stand in for it."""
