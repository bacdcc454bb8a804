"""fusionlint's built-in rulesets (YAML data; installed as the package ``fusionlint.rulesets``)."""
