#!/usr/bin/env node
// The built CLI; `npm ci` at the repository root builds it (the root `prepare` script).
import '../dist/main.js';
