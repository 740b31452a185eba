#!/usr/bin/env node
/** The `agentauth-agent` command (package.json "bin"; built into dist/cli.js). */
import { main } from './index.ts';

await main(process.argv);
