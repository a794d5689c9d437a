import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError } from './exit-codes.ts';

// The config file holds one entry per profile: the API key and the base URL.
// It is written with mode 0600 (the key is a secret) through a temp file and a
// rename, so an interrupted write never leaves half a file.

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_PROFILE = 'default';

export type Profile = { api_key?: string | undefined; base_url?: string | undefined };
export type ConfigFile = { profiles: Record<string, Profile> };

/** `VALISE_CONFIG` (a file path), else `$XDG_CONFIG_HOME/valise/config.json`, else `~/.config/valise/config.json`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.VALISE_CONFIG) return env.VALISE_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'valise', 'config.json');
}

/** The directory of the config file; resume state lives there too. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return dirname(configPath(env));
}

export async function readConfig(path = configPath()): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    return { profiles: parsed.profiles ?? {} };
  } catch {
    throw new CliError(`The config file ${path} is not valid JSON.`, {
      hint: 'Fix it, or delete it and run `valise login`.',
    });
  }
}

export async function writeConfig(config: ConfigFile, path = configPath()): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600); // the mode option is filtered by the umask; the file must not be readable by others
  await rename(temp, path);
}

/** Where the key and URL come from: flags, then the environment, then the profile. */
export type Settings = { apiKey: string | undefined; baseUrl: string; profile: string };

export async function resolveSettings(profileName: string | undefined, env = process.env): Promise<Settings> {
  const profile = profileName ?? env.VALISE_PROFILE ?? DEFAULT_PROFILE;
  const stored = (await readConfig()).profiles[profile] ?? {};
  return {
    profile,
    apiKey: env.VALISE_API_KEY || stored.api_key,
    baseUrl: env.VALISE_BASE_URL || stored.base_url || DEFAULT_BASE_URL,
  };
}
