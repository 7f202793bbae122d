/**
 * Every route a Fastify instance registers, seen by an `onRoute` hook attached the moment the instance is created,
 * through Fastify's `fastify.initialization` diagnostics channel (the hook point Fastify documents for tracers): it
 * runs before the server adds any plugin or route, so nothing the server registers can escape it. The server's own
 * `tenantRoutes` lists only routes that declare an action, so it cannot show one that forgot to.
 */
import diagnostics from 'node:diagnostics_channel';
import type { FastifyInstance } from 'fastify';

/** One method of one registered route, with the action its config declares (undefined: none). */
export interface RegisteredRoute {
  method: string;
  url: string;
  action: string | undefined;
  /** What the route declares it hands back of the tenant's records (undefined: nothing declared). */
  reads: string | undefined;
}

export interface RouteRecording<T> {
  built: T;
  /** The routes of an instance created while recording; throws for any other instance. */
  routesOf(app: FastifyInstance): RegisteredRoute[];
}

/** Runs `build` and records every route of every Fastify instance created meanwhile (routes added later included). */
export async function recordRoutes<T>(build: () => Promise<T>): Promise<RouteRecording<T>> {
  const channel = diagnostics.channel('fastify.initialization');
  const seen = new Map<FastifyInstance, RegisteredRoute[]>();
  const onInit = (message: unknown) => {
    const { fastify } = message as { fastify: FastifyInstance };
    const routes: RegisteredRoute[] = [];
    seen.set(fastify, routes);
    fastify.addHook('onRoute', (route) => {
      const { action, reads } = (route.config ?? {}) as { action?: string; reads?: string };
      for (const method of [route.method].flat()) routes.push({ method, url: route.url, action, reads });
    });
  };
  channel.subscribe(onInit);
  let built: T;
  try {
    built = await build();
  } finally {
    channel.unsubscribe(onInit);
  }
  return {
    built,
    routesOf(app) {
      const routes = seen.get(app);
      if (!routes) throw new Error('route recorder: this Fastify instance was not created while recording');
      return routes;
    },
  };
}
