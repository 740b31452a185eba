/** Global setup of the postgres project: one throwaway cluster for the whole run. */
import type { TestProject } from 'vitest/node';
import { startCluster } from '../helpers/postgres-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default function setup(project: TestProject): () => void {
  const cluster = startCluster();
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
