import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';

/**
 * The browser the page tests drive: Debian's chromium when installed (TEST_CHROMIUM_PATH names another
 * place to look, or a missing file to test without it), otherwise the headless Chromium that the
 * @sparticuz/chromium package ships, so a machine with only Node.js runs the browser tests too.
 */
export const SYSTEM_CHROMIUM = process.env.TEST_CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface LaunchedBrowser {
  browser: Browser;
  /** Which Chromium it is, for the test's output. */
  source: string;
}

export async function launchChromium(systemChromium = SYSTEM_CHROMIUM): Promise<LaunchedBrowser> {
  if (fs.existsSync(systemChromium)) {
    const browser = await chromium.launch({ executablePath: systemChromium, args: ARGS });
    return { browser, source: `${systemChromium} ${browser.version()}` };
  }
  // The package's browser is a Linux x86-64 build.
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `${systemChromium} is missing and @sparticuz/chromium has no browser for ${process.platform}-${process.arch}: set TEST_CHROMIUM_PATH to a Chromium or Chrome executable`,
    );
  const packaged = await unpackPackagedChromium();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  const browser = await chromium.launch({
    executablePath: packaged.executable,
    args: ARGS,
    env: {
      ...env,
      // The package's own NSS and expat (built for Amazon Linux, ABI-compatible with glibc systems):
      // the machine need not have a browser's libraries installed.
      LD_LIBRARY_PATH: [packaged.lib, env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      FONTCONFIG_PATH: packaged.fonts,
    },
  });
  return { browser, source: `@sparticuz/chromium ${browser.version()} (${systemChromium} not found)` };
}

interface PackagedChromium {
  executable: string;
  lib: string;
  fonts: string;
}

/**
 * Unpacks the package's brotli-compressed browser, libraries and fonts once per package version into
 * the temp directory (a few seconds), and reuses them after. The package's own `executablePath()`
 * unpacks straight into the temp directory's top level and adds its libraries only on Amazon Linux.
 */
async function unpackPackagedChromium(): Promise<PackagedChromium> {
  const require = createRequire(import.meta.url);
  const root = path.resolve(path.dirname(require.resolve('@sparticuz/chromium')), '..', '..');
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
  };
  // Per user, and used only when it is this user's: a browser another user put there is not run.
  const target = path.join(os.tmpdir(), `registry-test-chromium-${version}-${process.getuid?.() ?? 0}`);
  const layout = (dir: string): PackagedChromium => ({
    executable: path.join(dir, 'chromium'),
    lib: path.join(dir, 'lib'),
    fonts: path.join(dir, 'fonts'),
  });
  if (fs.existsSync(layout(target).executable)) return owned(layout(target));

  // Unpacked beside the target and renamed into place, so a concurrent run never sees half of it.
  const partial = fs.mkdtempSync(`${target}.partial-`);
  try {
    const bin = path.join(root, 'bin');
    await pipeline(
      fs.createReadStream(path.join(bin, 'chromium.br')),
      zlib.createBrotliDecompress(),
      fs.createWriteStream(layout(partial).executable, { mode: 0o755 }),
    );
    await untar(path.join(bin, 'al2023.tar.br'), partial);
    // ANGLE's SwiftShader (software GL) beside the executable, where Chromium looks for it: without
    // it the compositor cannot capture some full-page screenshots.
    await untar(path.join(bin, 'swiftshader.tar.br'), partial);
    fs.mkdirSync(layout(partial).fonts);
    await untar(path.join(bin, 'fonts.tar.br'), layout(partial).fonts);
    // The shipped fonts.conf names Lambda's paths: fontconfig is told where these fonts are instead.
    fs.writeFileSync(
      path.join(layout(partial).fonts, 'fonts.conf'),
      [
        '<?xml version="1.0"?>',
        '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
        '<fontconfig>',
        `  <dir>${path.join(layout(target).fonts, 'fonts')}</dir>`,
        `  <cachedir>${path.join(target, 'fonts-cache')}</cachedir>`,
        '</fontconfig>',
        '',
      ].join('\n'),
    );
    fs.renameSync(partial, target);
  } catch (error) {
    fs.rmSync(partial, { recursive: true, force: true });
    // Another run renamed its copy into place first: use that one.
    if (fs.existsSync(layout(target).executable)) return owned(layout(target));
    throw error;
  }
  return layout(target);
}

function owned(chromium: PackagedChromium): PackagedChromium {
  const { uid, mode } = fs.statSync(path.dirname(chromium.executable));
  if (uid !== (process.getuid?.() ?? uid) || (mode & 0o022) !== 0)
    throw new Error(`${path.dirname(chromium.executable)} is not this user's own: remove it and run again`);
  return chromium;
}

/** Extracts a brotli-compressed tar archive into `dir` with the system's tar. */
async function untar(archive: string, dir: string): Promise<void> {
  // Through a file: tar may stop reading at the archive's end marker, before the stream's end.
  const file = path.join(dir, '.archive.tar');
  await pipeline(fs.createReadStream(archive), zlib.createBrotliDecompress(), fs.createWriteStream(file));
  try {
    execFileSync('tar', ['-x', '--no-same-owner', '-f', file, '-C', dir], { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`tar could not extract ${archive}: ${stderr || String(error)}`);
  } finally {
    fs.rmSync(file, { force: true });
  }
}
