import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC_ROUTE = 'gateway:isPublicRoute';

/** Health probes: never behind the bearer (docs/endpoints.md "Authentication"). */
export const Public = () => SetMetadata(IS_PUBLIC_ROUTE, true);
