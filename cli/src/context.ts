import { Valise } from '../../sdk/src/index.ts';
import { resolveSettings, type Settings } from './config.ts';
import { CliError } from './exit-codes.ts';

// What a command needs besides its own flags: output mode, and a client built
// from VALISE_API_KEY / VALISE_BASE_URL or the profile in the config file.

/** The flags every command accepts (GLOBAL_OPTIONS in args.ts), parsed. */
export type GlobalFlags = { json: boolean; profile: string | undefined; help: boolean };

export type Context = {
  json: boolean;
  settings: Settings;
  /** The API client; fails with a clear message when no key is configured. */
  client: () => Valise;
};

export async function createContext(flags: GlobalFlags): Promise<Context> {
  const settings = await resolveSettings(flags.profile);
  return {
    json: flags.json,
    settings,
    client: () => {
      if (!settings.apiKey) {
        throw new CliError(`Not logged in (profile ${settings.profile}).`, {
          hint: 'Run `valise login`, or set VALISE_API_KEY.',
        });
      }
      return new Valise({ apiKey: settings.apiKey, baseUrl: settings.baseUrl });
    },
  };
}

/** A client without a key, for public routes (share links). */
export function publicClient(settings: Settings): Valise {
  return new Valise({ baseUrl: settings.baseUrl });
}
