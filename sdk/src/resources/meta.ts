import type { RequestOptions } from '../client.ts';
import type { Me, Welcome } from '../types.ts';
import { Resource } from './resource.ts';

export class Meta extends Resource {
  /** The calling key: its workspace, environment, scopes and user. */
  me(options?: RequestOptions): Promise<Me> {
    return this.call('meta.me', { options });
  }

  /** Public: the API's version and where its documents are. */
  welcome(options?: RequestOptions): Promise<Welcome> {
    return this.call('meta.welcome', { options, authenticate: false });
  }
}
