#!/usr/bin/env node
// @ts-check
// The `bloomgate` command. Everything lives in ./cli/; this file only runs it.
import { main } from './cli/main.js';
import { stdoutClosed } from './cli/stdout.js';

stdoutClosed();
process.exitCode = await main(process.argv.slice(2));
