"""The program under mocks: the recording resource monitor (`monitor`) and what it answers for invokes
(`invokes`), resource outputs (`outputs`) and pulumi-eks's remote component (`eks`), built from deterministic
values (`values`)."""
