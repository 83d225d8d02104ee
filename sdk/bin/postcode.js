#!/usr/bin/env node
// The `postcode` bin: sdk/dist is built after npm links bins (postinstall), so the link points at this file.
import '../dist/cli.js';
