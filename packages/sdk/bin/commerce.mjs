#!/usr/bin/env node
// The `commerce` command; its code is built into dist/esm by `npm run build` (and by `prepack`).
import { main } from '../dist/esm/cli.js';

process.exitCode = await main(process.argv.slice(2));
