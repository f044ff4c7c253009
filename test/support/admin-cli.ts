import { runAdminCli } from '../../src/cli/admin.js';
import { ADMIN_TOKEN, type TestApp } from './harness.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The admin CLI's own code, in-process, with exactly this environment (nothing inherited from the
 * test's): no Node start per command (test/checkout/admin-cli.test.ts proves the program itself
 * once, as a real process).
 */
export async function adminCliWith(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runAdminCli(args, env, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

/** The admin CLI against a test's server. */
export function adminCli(t: TestApp, ...args: string[]): Promise<CliResult> {
  return adminCliWith({ ADMIN_URL: t.baseUrl, ADMIN_TOKEN }, ...args);
}
