/**
 * The real `SidebarApi`: ServerConnection requests under the server's base URL (so it
 * works behind JupyterHub). POSTs carry Jupyter's XSRF header through ServerConnection.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { SidebarApi } from './model';
import { SnapshotApi } from './notebook_refresh';
import { ControlAction, GpusReply, RunsReply, SnapshotReply } from './types';

async function request<T>(path: string[], init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'ludwig-nb', ...path.map(encodeURIComponent));
  const response = await ServerConnection.makeRequest(url, init, settings);
  if (!response.ok) {
    throw await ServerConnection.ResponseError.create(response);
  }
  return (await response.json()) as T;
}

export const serverApi: SidebarApi = {
  gpus: () => request<GpusReply>(['gpus']),
  runs: () => request<RunsReply>(['runs']),
  control: async (runId: string, action: ControlAction) => {
    await request<unknown>(['runs', runId, action], { method: 'POST' });
  }
};

export const snapshotApi: SnapshotApi = {
  snapshot: (runId: string) => request<SnapshotReply>(['runs', runId, 'snapshot'])
};
