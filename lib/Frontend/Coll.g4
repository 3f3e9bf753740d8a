// The Coll language (see LANGUAGE.md). Keywords that may also be names
// ('in' as a buffer, 'reduce' as a collective, 'step' as a variable) are
// listed in the `name` rules so that programs keep their natural spelling.
grammar Coll;

file        : algorithm* EOF ;

algorithm   : 'algorithm' name ':' collective '(' params? ')'
              chunksClause? inplaceClause? block ;
collective  : name | 'reduce' ;
params      : param (',' param)* ;
param       : name '=' expr ;
chunksClause  : 'chunks' '(' expr ')' ;
inplaceClause : 'inplace' ;

block       : '{' stmt* '}' ;
stmt        : annotation* stmtBody ;
annotation  : '@' name '(' expr ')' ;
stmtBody    : block                                                  # blockStmt
            | 'let' name '=' expr ';'                                # letStmt
            | 'for' name 'in' expr '..' expr ('step' expr)? block    # forStmt
            | 'if' expr block ('else' 'if' expr block)* ('else' block)?  # ifStmt
            | 'assert' expr ',' STRING ';'                           # assertStmt
            | 'scratch' name '[' expr ']' ';'                        # scratchStmt
            | chunk op=('=' | '+=') sources ';'                      # assignStmt
            | chunk '=' 'reduce' '(' name 'in' expr '..' expr ')' chunk ';'  # reduceStmt
            ;
sources     : chunk ('+' chunk)* ;
chunk       : buffer '[' expr ']' '[' expr ('..' expr)? ']' ;
buffer      : name | 'in' ;

expr        : primary                                        # primaryExpr
            | op=('-' | '!' | '~') expr                      # unaryExpr
            | expr op=('*' | '/' | '%') expr                 # binaryExpr
            | expr op=('+' | '-') expr                       # binaryExpr
            | expr op=('<<' | '>>') expr                     # binaryExpr
            | expr op=('<' | '<=' | '>' | '>=') expr         # binaryExpr
            | expr op=('==' | '!=') expr                     # binaryExpr
            | expr op='&' expr                               # binaryExpr
            | expr op='^' expr                               # binaryExpr
            | expr op='|' expr                               # binaryExpr
            | expr op='&&' expr                              # binaryExpr
            | expr op='||' expr                              # binaryExpr
            ;
primary     : INT                                            # intLit
            | name '(' (expr (',' expr)*)? ')'               # callExpr
            | name                                           # varRef
            | '(' expr ')'                                   # parenExpr
            ;
name        : IDENT | 'step' | 'chunks' | 'inplace' | 'scratch' ;

INT         : [0-9]+ | '0' [xX] [0-9a-fA-F]+ ;
IDENT       : [a-zA-Z_] [a-zA-Z_0-9]* ;
STRING      : '"' (~["\\\r\n] | '\\' .)* '"' ;
LINE_COMMENT  : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
WS          : [ \t\r\n]+ -> skip ;
