/** Runs the Debian `kcat` (librdkafka) against a node: produce from stdin, consume one partition to its end. */
import { spawn } from 'node:child_process';

export interface KcatResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run kcat with `args` and `input` on stdin; resolves when it exits (killed after `timeoutMs`). */
export function kcat(args: string[], input = '', timeoutMs = 20_000): Promise<KcatResult> {
  return new Promise((resolve, reject) => {
    const p = spawn('kcat', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.once('error', reject);
    p.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    p.stdin.end(input);
  });
}

/** librdkafka settings for SASL/PLAIN with an access token as password. */
export function saslArgs(token: string): string[] {
  return ['-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=PLAIN', '-X', 'sasl.username=svc', '-X', `sasl.password=${token}`];
}

/** Produce `lines` (key:value) to partition 0 of `topic`, each with header h=<i>. */
export async function kcatProduce(broker: string, topic: string, lines: string[], extra: string[] = []): Promise<KcatResult> {
  return kcat(['-P', '-b', broker, '-t', topic, '-p', '0', '-K', ':', ...extra], lines.join('\n') + '\n');
}

/** Consume partition 0 of `topic` from the beginning to its end: one `offset|key|value|headers|timestamp` line per record. */
export async function kcatConsume(broker: string, topic: string, extra: string[] = []): Promise<string[]> {
  const r = await kcat(['-C', '-b', broker, '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%o|%k|%s|%h|%T\\n', ...extra]);
  if (r.code !== 0) throw new Error(`kcat -C exited with ${r.code}: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l !== '');
}
