/**
 * Imported first by the entry points (main.ts, cli.ts), before anything that needs a supported
 * Node line: on another one (Node 20, say, started as `node dist/src/main.js` rather than through
 * `npm start`, which picks a supported Node itself: scripts/with-node.sh) the process stops with a
 * message saying which lines run flowgate, instead of failing later on `node:sqlite` or an ESM-only
 * dependency. Keep in step with `engines` in package.json (test/platform.test.ts checks).
 */

/** Whether Node `version` (x.y.z) is a supported line: 22.19 or later on 22, 24, 26. */
export function supportedNode(version: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  if (major === 22) return (minor ?? 0) >= 19;
  return major === 24 || major === 26;
}

if (!supportedNode(process.versions.node)) {
  process.stderr.write(`flowgate: Node ${process.version} is not supported; run it on Node 22 (22.19 or later), 24 or 26 ` +
    '(`npm start` and `npm test` fetch one when the machine has none: scripts/with-node.sh)\n');
  process.exit(2);
}
