# Thin aliases for the two README commands.
.PHONY: demo test
demo:
	python3 scripts/dev.py demo
test:
	python3 scripts/dev.py test
