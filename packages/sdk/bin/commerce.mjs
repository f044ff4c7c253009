#!/usr/bin/env node
// The `commerce` command; its code is built into dist/ by the repository's `npm install`.
import { main } from '../dist/cli.js';

process.exitCode = await main(process.argv.slice(2));
