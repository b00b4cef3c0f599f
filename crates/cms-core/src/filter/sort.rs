//! From the `sort` parameter to [`SortKey`]s.

use super::{BuiltinColumn, Direction, FieldPath, SortKey};
use crate::field_kind::{FieldKind, FieldLookup};

/// Most keys honoured; later ones are ignored (the id tie-break already makes order total).
pub const MAX_SORT_KEYS: usize = 8;

/// Parses sort specifications: a name, `-` prefixed for descending. `publishedAt`, `createdAt`
/// and `updatedAt` are built in (and win over a declared field of the same name); any other
/// name must be a declared scalar path. Unknown, unreadable, non-scalar and repeated names are
/// ignored rather than refused (CONTRACT.md section 5): a sort cannot leak or widen anything,
/// so the caller just gets the default order for that key.
pub fn parse_sort(spec: &[&str], lookup: &dyn FieldLookup) -> Vec<SortKey> {
    let mut keys: Vec<SortKey> = Vec::new();
    for item in spec {
        if keys.len() == MAX_SORT_KEYS {
            break;
        }
        if let Some(key) = sort_key(item.trim(), lookup)
            && !keys.iter().any(|k| same_target(k, &key))
        {
            keys.push(key);
        }
    }
    keys
}

fn sort_key(item: &str, lookup: &dyn FieldLookup) -> Option<SortKey> {
    let (name, direction) = match item.strip_prefix('-') {
        Some(name) => (name, Direction::Desc),
        None => (item, Direction::Asc),
    };
    if let Some(column) = builtin(name) {
        return Some(SortKey::Column(column, direction));
    }
    let (path, kind) = FieldPath::declared(name, lookup)?;
    sortable(kind).then_some(SortKey::Field(path, kind, direction))
}

fn builtin(name: &str) -> Option<BuiltinColumn> {
    Some(match name {
        "publishedAt" => BuiltinColumn::PublishedAt,
        "createdAt" => BuiltinColumn::CreatedAt,
        "updatedAt" => BuiltinColumn::UpdatedAt,
        _ => return None,
    })
}

/// Scalar kinds have one value per document to order by; arrays and objects do not.
fn sortable(kind: FieldKind) -> bool {
    !matches!(kind, FieldKind::StringArray | FieldKind::Other)
}

/// A second key on the same column or field can never change the order: the first wins.
fn same_target(a: &SortKey, b: &SortKey) -> bool {
    match (a, b) {
        (SortKey::Column(x, _), SortKey::Column(y, _)) => x == y,
        (SortKey::Field(x, _, _), SortKey::Field(y, _, _)) => x == y,
        _ => false,
    }
}
