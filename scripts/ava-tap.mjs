// Runs AVA with its TAP reporter, made unable to crash on a failure.
//
// supertap dumps each failing test's error as YAML with `at` set to the
// second line of its stack. AVA strips library frames from stacks, so an error
// raised inside a dependency (a refused connection, a fetch failure) can be
// left with one line: `at` is then undefined, js-yaml refuses to dump it, and
// the exception takes the whole run down before the remaining tests report.
// Dumping with skipInvalid leaves such fields out instead.
import { createRequire } from 'node:module';

const requireNearSupertap = createRequire(import.meta.resolve('supertap'));
const yaml = requireNearSupertap('js-yaml');
const safeDump = yaml.safeDump;
yaml.safeDump = (object, options) => safeDump(object, { ...options, skipInvalid: true });

const { default: run } = await import(new URL('../node_modules/ava/lib/cli.js', import.meta.url).href);
await run();
