/** Runs test/kafka/clients/platformatic.mjs (@platformatic/kafka is ESM only; Jest runs CommonJS here). */
import { execFile } from 'node:child_process';
import * as path from 'node:path';

const SCRIPT = path.join(__dirname, 'clients', 'platformatic.mjs');

export interface PlatformaticRecord {
  offset: string;
  key: string | null;
  value: string | null;
  timestamp: string;
  headers: Record<string, string | null>;
  codec: number;
}

export interface PlatformaticResult {
  ok: boolean;
  error?: string;
  errors?: string[];
  offsets?: Array<{ partition: number; offset: string }>;
  records?: PlatformaticRecord[];
  topics?: string[];
}

export function platformatic(cmd: Record<string, unknown>): Promise<PlatformaticResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [SCRIPT, JSON.stringify(cmd)], { timeout: 30_000 }, (err, stdout, stderr) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as PlatformaticResult);
      } catch {
        reject(new Error(`platformatic client failed: ${err?.message ?? ''}\n${stdout}\n${stderr}`));
      }
    });
  });
}
