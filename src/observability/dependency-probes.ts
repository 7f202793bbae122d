import type { MongoClient } from 'mongodb';
import type { Client as ElasticsearchClient } from '@elastic/elasticsearch';
import type { Connection } from '@temporalio/client';
import type { Transporter } from 'nodemailer';
import type { DependencyProbe } from './readiness.js';

export function mongoProbe(client: MongoClient): DependencyProbe {
  return {
    name: 'mongodb',
    async check() {
      await client.db('admin').command({ ping: 1 });
    },
  };
}

export function elasticsearchProbe(client: ElasticsearchClient): DependencyProbe {
  return {
    name: 'elasticsearch',
    async check() {
      const health = await client.cluster.health({ timeout: '2s' });
      if (health.status === 'red') throw new Error('cluster status red');
    },
  };
}

export function temporalProbe(connection: Connection): DependencyProbe {
  return {
    name: 'temporal',
    async check() {
      const response = await connection.healthService.check({});
      if (response.status !== 1) throw new Error(`health status ${String(response.status)}`);
    },
  };
}

export function smtpProbe(transport: Transporter): DependencyProbe {
  return {
    name: 'smtp',
    servesWithout: true,
    async check() {
      await transport.verify();
    },
  };
}
