//! The registry of schemas: checks that they fit together, then answers questions about them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::model::{
    Field, FieldType, Indexing, Schema, SchemaKind, is_builtin_type, is_valid_name,
};
use super::{Level, SchemaError};
use crate::field_kind::{FieldKind, FieldLookup};
use crate::locale::{LocaleTag, Locales};

/// Every registered schema. Holding one means the schemas were checked together: names are
/// valid and unique, named types and reference targets exist, and object types do not nest
/// into themselves, so lookups and validation can rely on it.
#[derive(Debug, Clone, Default)]
pub struct Schemas {
    list: Vec<Schema>,
    by_name: HashMap<String, usize>,
    /// The instance's locales, which keys of localized values must name; shared, so a request
    /// holds them without copying.
    pub(super) locales: Arc<Locales>,
    /// The document types with a localized field anywhere: only their data is reshaped per
    /// locale, so every other type's read path stays as it was.
    pub(super) localized_types: HashSet<String>,
}

impl Schemas {
    /// Registers `list`, refusing it when the schemas do not fit together.
    pub fn new(list: Vec<Schema>) -> Result<Schemas, SchemaError> {
        let mut by_name = HashMap::new();
        for (i, schema) in list.iter().enumerate() {
            check_header(schema)?;
            if by_name.insert(schema.name.clone(), i).is_some() {
                return Err(SchemaError::new(
                    Some(&schema.name),
                    None,
                    "is declared twice",
                ));
            }
        }
        let mut schemas = Schemas {
            list,
            by_name,
            locales: Arc::new(Locales::default()),
            localized_types: HashSet::new(),
        };
        for schema in &schemas.list {
            let checker = Checker {
                schemas: &schemas,
                schema: &schema.name,
            };
            checker.level(&schema.fields, Level::Fields(""), false)?;
        }
        schemas.check_cycles()?;
        schemas.check_localized()?;
        schemas.localized_types = schemas.find_localized_types();
        Ok(schemas)
    }

    /// These schemas with the instance's locales (the default is `["en"]`).
    pub fn with_locales(mut self, locales: Locales) -> Schemas {
        self.locales = Arc::new(locales);
        self
    }

    pub fn locales(&self) -> &Locales {
        &self.locales
    }

    /// [`Self::locales`], shared.
    pub fn shared_locales(&self) -> Arc<Locales> {
        Arc::clone(&self.locales)
    }

    pub fn get(&self, name: &str) -> Option<&Schema> {
        self.by_name.get(name).map(|&i| &self.list[i])
    }

    /// The document types, in registration order.
    pub fn documents(&self) -> impl Iterator<Item = &Schema> {
        self.list.iter().filter(|s| s.is_document())
    }

    /// Every schema, documents and object types, in registration order.
    pub fn all(&self) -> &[Schema] {
        &self.list
    }

    /// The field view of a type, for the query language and the store's indexes; queries read
    /// localized fields in the default locale (see [`TypeFields::in_locale`]).
    pub fn fields(&self, type_name: &str) -> Option<TypeFields<'_>> {
        self.get(type_name).map(|s| TypeFields {
            schemas: self,
            fields: &s.fields,
            locale: self.locales.default_locale(),
        })
    }

    /// Checks fields declared outside any schema (an event's payload) against the registry
    /// exactly as an object type's fields are checked: valid and unique names, named object
    /// types and reference targets that exist, slug sources, non-empty member lists. `owner`
    /// names them in errors. Such a value is never stored as a document, so its fields take
    /// no `indexed` and no `access` (neither has a meaning there; both are refused rather
    /// than ignored).
    pub fn check_fields(&self, owner: &str, fields: &[Field]) -> Result<(), SchemaError> {
        let checker = Checker {
            schemas: self,
            schema: owner,
        };
        checker.level(fields, Level::Fields(""), false)?;
        unstored_options(owner, fields, Level::Fields(""))
    }

    /// The fields an object-shaped value of type `ty` holds: an inline `object`'s fields or
    /// a named object type's. `None` for every other type.
    pub(crate) fn children<'a>(&'a self, ty: &'a FieldType) -> Option<&'a [Field]> {
        match ty {
            FieldType::Object { fields } => Some(fields),
            FieldType::Named(name) => self.get(name).map(|s| s.fields.as_slice()),
            _ => None,
        }
    }

    /// Refuses any object type that contains itself, through fields, nested objects or array
    /// members: such a type has no finite description for indexes, GraphQL or OpenAPI.
    fn check_cycles(&self) -> Result<(), SchemaError> {
        let mut done = HashSet::new();
        for schema in self.list.iter().filter(|s| s.kind == SchemaKind::Object) {
            self.visit(&schema.name, &mut Vec::new(), &mut done)?;
        }
        Ok(())
    }

    /// Depth-first walk over named-type edges; `stack` is the current chain.
    fn visit<'a>(
        &'a self,
        name: &'a str,
        stack: &mut Vec<&'a str>,
        done: &mut HashSet<&'a str>,
    ) -> Result<(), SchemaError> {
        if let Some(start) = stack.iter().position(|n| *n == name) {
            let mut chain = stack[start..].to_vec();
            chain.push(name);
            let message = format!("object type contains itself: {}", chain.join(" -> "));
            return Err(SchemaError::new(Some(name), None, message));
        }
        if !done.insert(name) {
            return Ok(());
        }
        stack.push(name);
        let mut named = Vec::new();
        if let Some(schema) = self.get(name) {
            named_types(&schema.fields, &mut named);
        }
        for child in named {
            self.visit(child, stack, done)?;
        }
        stack.pop();
        Ok(())
    }
}

/// Refuses `indexed`, `searchable`, `localized` and `access` anywhere in fields that are not stored as a
/// document.
fn unstored_options(owner: &str, fields: &[Field], level: Level) -> Result<(), SchemaError> {
    for field in fields {
        let path = level.path_of(&field.name);
        let refuse = |option: &str| {
            let message = format!("{option} applies only to fields of document types");
            Err(SchemaError::new(Some(owner), Some(&path), message))
        };
        if field.indexed != Indexing::Automatic {
            return refuse("indexed");
        }
        if field.searchable {
            return refuse("searchable");
        }
        if field.localized {
            return refuse("localized");
        }
        if !field.access.is_empty() {
            return refuse("access");
        }
        match &field.ty {
            FieldType::Object { fields } => unstored_options(owner, fields, Level::Fields(&path))?,
            FieldType::Array { of, .. } => unstored_options(owner, of, Level::Members(&path))?,
            _ => {}
        }
    }
    Ok(())
}

/// The named types used anywhere inside `fields` (nested objects and array members included).
fn named_types<'a>(fields: &'a [Field], out: &mut Vec<&'a str>) {
    for field in fields {
        match &field.ty {
            FieldType::Named(name) => out.push(name),
            FieldType::Object { fields } => named_types(fields, out),
            FieldType::Array { of, .. } => named_types(of, out),
            _ => {}
        }
    }
}

/// Checks that concern one schema as a whole: its name and the `singleton` flag.
fn check_header(schema: &Schema) -> Result<(), SchemaError> {
    let fail = |message: &str| Err(SchemaError::new(Some(&schema.name), None, message));
    if !is_valid_name(&schema.name) {
        return fail("names must match ^[A-Za-z_][A-Za-z0-9_]*$");
    }
    if schema.kind == SchemaKind::Object && is_builtin_type(&schema.name) {
        return fail("an object type may not take the name of a built-in field type");
    }
    if schema.singleton && schema.kind != SchemaKind::Document {
        return fail("singleton applies only to document schemas");
    }
    Ok(())
}

/// Checks the fields of one schema against the registry.
struct Checker<'a> {
    schemas: &'a Schemas,
    schema: &'a str,
}

impl Checker<'_> {
    fn err(&self, path: &str, message: impl Into<String>) -> SchemaError {
        SchemaError::new(Some(self.schema), Some(path), message)
    }

    /// One object level (or one array's member list): names, then each field.
    fn level(&self, fields: &[Field], level: Level, in_array: bool) -> Result<(), SchemaError> {
        let mut seen = HashSet::new();
        for field in fields {
            let path = level.path_of(&field.name);
            if !is_valid_name(&field.name) {
                return Err(self.err(&path, "names must match ^[A-Za-z_][A-Za-z0-9_]*$"));
            }
            if !seen.insert(field.name.as_str()) {
                let message = format!("\"{}\" is declared twice at this level", field.name);
                return Err(self.err(&path, message));
            }
            self.renamed_from(field, fields, &path)?;
            self.indexed(field, &path, in_array)?;
            self.searchable(field, &path, in_array)?;
            self.field_type(field, fields, level, &path, in_array)?;
        }
        Ok(())
    }

    /// `renamedFrom` names a former key of this level: a valid name that no field of the level
    /// has now and no other field was renamed from, and not on an array member.
    fn renamed_from(&self, field: &Field, level: &[Field], path: &str) -> Result<(), SchemaError> {
        let Some(old) = &field.renamed_from else {
            return Ok(());
        };
        if !is_valid_name(old) {
            return Err(self.err(path, "renamedFrom must match ^[A-Za-z_][A-Za-z0-9_]*$"));
        }
        if level.iter().any(|f| &f.name == old) {
            let message = format!("renamedFrom \"{old}\" is still a field at this level");
            return Err(self.err(path, message));
        }
        let renamed = level
            .iter()
            .filter(|f| f.renamed_from.as_ref() == Some(old));
        if renamed.count() > 1 {
            let message = format!("more than one field is renamed from \"{old}\"");
            return Err(self.err(path, message));
        }
        Ok(())
    }

    /// `indexed: true` needs one scalar value per document: not inside an array, not a
    /// composite. (`false` and the automatic default are always possible.)
    fn indexed(&self, field: &Field, path: &str, in_array: bool) -> Result<(), SchemaError> {
        if field.indexed != Indexing::Declared {
            return Ok(());
        }
        if in_array {
            return Err(self.err(path, "indexed is not possible inside an array"));
        }
        if !field.ty.is_indexable() {
            let message = format!(
                "indexed applies only to scalar fields, not to {}",
                field.ty.type_name()
            );
            return Err(self.err(path, message));
        }
        Ok(())
    }

    /// `searchable` needs text: a string, text or block field, not inside an array (a search
    /// row is one field's value).
    fn searchable(&self, field: &Field, path: &str, in_array: bool) -> Result<(), SchemaError> {
        if !field.searchable {
            return Ok(());
        }
        if in_array {
            return Err(self.err(path, "searchable is not possible inside an array"));
        }
        if !field.ty.is_text() {
            let message = format!(
                "searchable applies only to string, text and block fields, not to {}",
                field.ty.type_name()
            );
            return Err(self.err(path, message));
        }
        Ok(())
    }

    fn field_type(
        &self,
        field: &Field,
        siblings: &[Field],
        level: Level,
        path: &str,
        in_array: bool,
    ) -> Result<(), SchemaError> {
        match &field.ty {
            FieldType::Named(name) => self.named(name, path),
            FieldType::Reference { to } => self.targets(to, path),
            FieldType::Slug {
                source: Some(source),
            } => self.source(source, siblings, level, path),
            FieldType::Array { of, .. } if of.is_empty() => {
                Err(self.err(path, "of must not be empty"))
            }
            FieldType::Array { of, .. } => self.level(of, Level::Members(path), true),
            FieldType::Object { fields } => self.level(fields, Level::Fields(path), in_array),
            _ => Ok(()),
        }
    }

    fn named(&self, name: &str, path: &str) -> Result<(), SchemaError> {
        match self.schemas.get(name) {
            Some(s) if s.kind == SchemaKind::Object => Ok(()),
            Some(_) => Err(self.err(
                path,
                format!("\"{name}\" is a document type; use a reference to point to documents"),
            )),
            None => Err(self.err(path, format!("unknown type \"{name}\""))),
        }
    }

    fn targets(&self, to: &[String], path: &str) -> Result<(), SchemaError> {
        if to.is_empty() {
            return Err(self.err(path, "to must name at least one document type"));
        }
        for target in to {
            match self.schemas.get(target) {
                Some(s) if s.kind == SchemaKind::Document => {}
                Some(_) => {
                    let message =
                        format!("to: \"{target}\" is an object type, not a document type");
                    return Err(self.err(path, message));
                }
                None => {
                    return Err(self.err(path, format!("to: unknown document type \"{target}\"")));
                }
            }
        }
        Ok(())
    }

    /// A slug derives from a sibling string or text field (the admin fills it from there).
    fn source(
        &self,
        source: &str,
        siblings: &[Field],
        level: Level,
        path: &str,
    ) -> Result<(), SchemaError> {
        if matches!(level, Level::Members(_)) {
            return Err(self.err(path, "source is not possible on an array member"));
        }
        let found = siblings.iter().find(|f| f.name == source);
        match found.map(|f| &f.ty) {
            Some(FieldType::String { .. } | FieldType::Text { .. }) => Ok(()),
            Some(_) => Err(self.err(
                path,
                format!("source \"{source}\" is not a string or text field"),
            )),
            None => Err(self.err(
                path,
                format!("source \"{source}\" is not a field at this level"),
            )),
        }
    }
}

/// The fields of one type, as the query language and the store see them.
#[derive(Debug, Clone, Copy)]
pub struct TypeFields<'a> {
    schemas: &'a Schemas,
    fields: &'a [Field],
    /// The locale `where` and `sort` read localized fields in.
    locale: &'a LocaleTag,
}

impl<'a> TypeFields<'a> {
    /// The same fields, with queries reading localized fields in `locale`.
    pub fn in_locale(self, locale: &'a LocaleTag) -> TypeFields<'a> {
        TypeFields { locale, ..self }
    }

    /// The field at a dotted path; the path descends through `object` fields and named object
    /// types, never into arrays or other values.
    pub fn field(&self, path: &[&str]) -> Option<&'a Field> {
        self.walk(path).map(|(field, _)| field)
    }

    /// The field at `path`, and the position of the localized field it passes, if any.
    fn walk(&self, path: &[&str]) -> Option<(&'a Field, Option<usize>)> {
        let mut fields = self.fields;
        let mut localized = None;
        for (i, name) in path.iter().enumerate() {
            let field = fields.iter().find(|f| f.name == *name)?;
            if field.localized {
                localized = Some(i);
            }
            if i + 1 == path.len() {
                return Some((field, localized));
            }
            fields = self.schemas.children(&field.ty)?;
        }
        None
    }

    /// Every indexed field with its stored path, at the top and inside (named) objects, never
    /// inside arrays: those declared `indexed: true` and, unless `indexed: false`, those of the
    /// types indexed automatically (CONTRACT.md section 14). So the store can create one index
    /// per path: a localized one (or one inside a localized object) once per available locale.
    pub fn indexed_paths(&self) -> Vec<(Vec<String>, FieldKind)> {
        let mut out = Vec::new();
        self.collect_indexed(&mut Vec::new(), None, &mut out);
        out
    }

    fn collect_indexed(
        &self,
        prefix: &mut Vec<String>,
        localized: Option<usize>,
        out: &mut Vec<(Vec<String>, FieldKind)>,
    ) {
        for field in self.fields {
            prefix.push(field.name.clone());
            let localized = localized.or(field.localized.then(|| prefix.len() - 1));
            let indexed = match field.indexed {
                Indexing::Declared => true,
                Indexing::Automatic => field.ty.is_indexed_automatically(),
                Indexing::OptedOut => false,
            };
            if indexed {
                let kind = field.ty.kind();
                match localized {
                    None => out.push((prefix.clone(), kind)),
                    Some(at) => {
                        for tag in self.schemas.locales.available() {
                            let mut path = prefix.clone();
                            path.insert(at + 1, tag.to_string());
                            out.push((path, kind));
                        }
                    }
                }
            }
            if let Some(fields) = self.schemas.children(&field.ty) {
                let inner = TypeFields { fields, ..*self };
                inner.collect_indexed(prefix, localized, out);
            }
            prefix.pop();
        }
    }
}

impl FieldLookup for TypeFields<'_> {
    fn field_kind(&self, path: &[&str]) -> Option<FieldKind> {
        self.field(path).map(|f| f.ty.kind())
    }

    fn localized_at(&self, path: &[&str]) -> Option<(usize, LocaleTag)> {
        let (_, at) = self.walk(path)?;
        Some((at?, self.locale.clone()))
    }

    fn is_datetime(&self, path: &[&str]) -> bool {
        self.field(path)
            .is_some_and(|f| matches!(f.ty, FieldType::Datetime))
    }
}

#[cfg(test)]
mod tests;
