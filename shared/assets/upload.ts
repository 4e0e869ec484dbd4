import { badRequest, forbidden } from '../errors';
import { isHuman, type Principal } from '../auth/principal';
import { ASSET_TYPES, type AssetStore, type StoredAsset } from './asset-store';
import { sniffContentType } from './signatures';

/** A person uploads creative bytes: the declared type must be one we store and must match the bytes' own signature. */
export async function uploadAsset(assets: AssetStore, p: Principal, bytes: Buffer, declaredType: string | undefined): Promise<StoredAsset> {
  if (!isHuman(p)) throw forbidden('Assets are uploaded by people; a delegated agent cannot upload.', 'human_required');
  const declared = (declaredType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!ASSET_TYPES[declared]) {
    throw badRequest(
      `Content type ${declared || '(none)'} is not accepted. Send one of: ${Object.keys(ASSET_TYPES).join(', ')}.`,
      undefined,
      'unsupported_media_type',
    );
  }
  const actual = sniffContentType(bytes);
  if (actual !== declared) {
    throw badRequest(`The bytes are ${actual ?? 'of no recognised type'}, not ${declared}.`, undefined, 'content_type_mismatch');
  }
  return assets.put(bytes, declared, { advertiserId: p.advertiserId, userId: p.userId });
}
