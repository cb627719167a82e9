"""The offline Pulumi engine: the program under mocks (`mocks`), the analyzer host that runs the policy pack
(`gate`, `pack_process`, `policy_config`), and what the engine hands the pack (`view`, over `records`)."""
